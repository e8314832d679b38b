-- The launcher: worker slots, numbers 0..workersMax-1 of an endpoint, each held by one
-- machine's worker until its lease (epoch ms) passes; a machine renews its leases every
-- launcher tick and deletes a slot when its worker exits.
CREATE TABLE sw_launcher_slots (
  endpoint_id text NOT NULL,
  slot integer NOT NULL,
  machine_id text NOT NULL,
  worker_id text NOT NULL,
  lease_expires_at bigint NOT NULL,
  PRIMARY KEY (endpoint_id, slot)
);
CREATE INDEX sw_launcher_slots_machine ON sw_launcher_slots (machine_id);
