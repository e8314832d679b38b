-- The management store: the /v1 records (templates, network volumes, endpoints), shared
-- by every harness on the database. Each row keeps the whole record (jsonb) and, as
-- columns, what the store's rules query or the database enforces: unique template
-- names, the references of an endpoint (a template or volume in use cannot be deleted),
-- creation order (seq).
CREATE TABLE sw_mgmt_templates (
  id text PRIMARY KEY,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  name text NOT NULL UNIQUE,
  -- created without isServerless: recorded false, yet allowed to back an endpoint
  serverless_unset boolean NOT NULL,
  record jsonb NOT NULL
);
CREATE TABLE sw_mgmt_network_volumes (
  id text PRIMARY KEY,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  record jsonb NOT NULL
);
CREATE TABLE sw_mgmt_endpoints (
  id text PRIMARY KEY,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  template_id text NOT NULL REFERENCES sw_mgmt_templates (id),
  network_volume_id text REFERENCES sw_mgmt_network_volumes (id),
  record jsonb NOT NULL
);
CREATE INDEX sw_mgmt_endpoints_template ON sw_mgmt_endpoints (template_id);
CREATE INDEX sw_mgmt_endpoints_volume ON sw_mgmt_endpoints (network_volume_id) WHERE network_volume_id IS NOT NULL;
