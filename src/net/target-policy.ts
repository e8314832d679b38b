/**
 * @module net/target-policy
 * Where the harness may send a request on a caller's behalf (a job's webhook, a
 * load-balancing worker's URL): an allow/deny rule on the address actually connected,
 * so that a caller reaches nothing it does not own (SSRF).
 *
 * Refused whatever the allow list says: the harness itself (its own port on loopback, on
 * an unspecified address or on any of this machine's interfaces): a webhook at its own
 * `/purge-queue` would act with the harness's rights. Refused unless allowed: link-local
 * (169.254.0.0/16, fe80::/10), cloud metadata addresses and names (169.254.169.254,
 * fd00:ec2::254, 100.100.100.200, metadata.google.internal, ...), unspecified addresses
 * (0.0.0.0/8, ::), and loopback when `loopback` is false. `allow` widens: CIDR ranges,
 * single addresses, or the words `loopback`, `link-local`, `metadata`.
 *
 * Names are checked twice: the name itself (metadata names), then every address it
 * resolves to, and the caller checks the socket's remote address once connected (DNS
 * rebinding: a name that resolved to a public address at first may resolve to a private
 * one at connect time).
 */
import { lookup as nodeLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { networkInterfaces } from 'node:os';
import * as z from 'zod';

export interface TargetPolicyOptions {
  /** The harness's own port (answered when it listens; undefined before). */
  readonly selfPort: () => number | undefined;
  /** Whether loopback addresses (other than the harness itself) may be reached; default true. */
  readonly loopback?: boolean;
  /** Only loopback (and what `allow` names) may be reached: a harness without an API key takes load-balancing workers on loopback only. */
  readonly loopbackOnly?: string;
  /** Widen the policy: CIDR ranges (`10.0.0.0/8`), addresses, or `loopback`, `link-local`, `metadata`. */
  readonly allow?: readonly string[];
}

/** Names of metadata services, refused before any lookup. */
const METADATA_NAMES = new Set([
  'metadata.google.internal',
  'metadata.goog',
  'metadata',
  'instance-data',
  'instance-data.ec2.internal',
  'metadata.azure.internal',
]);

function blockOf(entries: ReadonlyArray<readonly [string, number, 'ipv4' | 'ipv6']>): BlockList {
  const list = new BlockList();
  for (const [network, prefix, type] of entries) list.addSubnet(network, prefix, type);
  return list;
}

const LINK_LOCAL = blockOf([
  ['169.254.0.0', 16, 'ipv4'],
  ['fe80::', 10, 'ipv6'],
]);
const METADATA = blockOf([
  ['169.254.169.254', 32, 'ipv4'],
  ['169.254.170.2', 32, 'ipv4'],
  ['100.100.100.200', 32, 'ipv4'],
  ['fd00:ec2::254', 128, 'ipv6'],
]);
const UNSPECIFIED = blockOf([
  ['0.0.0.0', 8, 'ipv4'],
  ['::', 128, 'ipv6'],
]);
const LOOPBACK = blockOf([
  ['127.0.0.0', 8, 'ipv4'],
  ['::1', 128, 'ipv6'],
]);

/** The address without brackets, IPv4-mapped IPv6 as IPv4 (`::ffff:127.0.0.1`, and `::ffff:7f00:1` as the URL parser writes it), lower case. */
export function bareAddress(host: string): string {
  const bare = host
    .trim()
    .replace(/^\[(.*)\]$/, '$1')
    .toLowerCase();
  const dotted = /^(?:0{0,4}:){0,5}:?ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(bare);
  if (dotted?.[1] !== undefined) return dotted[1];
  const hex = /^(?:0{0,4}:){0,5}:?ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(bare);
  if (hex?.[1] !== undefined && hex[2] !== undefined) {
    const high = Number.parseInt(hex[1], 16);
    const low = Number.parseInt(hex[2], 16);
    return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  }
  return bare;
}

const familyOf = (address: string): 'ipv4' | 'ipv6' => (isIP(address) === 6 ? 'ipv6' : 'ipv4');

const ALLOW_WORDS = ['loopback', 'link-local', 'metadata'] as const;

/** One parsed allow entry. */
type Allowed = { readonly kind: 'word'; readonly word: (typeof ALLOW_WORDS)[number] } | { readonly kind: 'block'; readonly list: BlockList };

/**
 * Parse allow entries; throws naming the first one that is neither a CIDR range, an
 * address nor one of the words.
 */
export function parseAllowList(entries: readonly string[]): Allowed[] {
  return entries.map((raw) => {
    const entry = raw.trim().toLowerCase();
    if ((ALLOW_WORDS as readonly string[]).includes(entry)) return { kind: 'word', word: entry as (typeof ALLOW_WORDS)[number] };
    const [network = '', prefixText] = entry.split('/');
    const address = bareAddress(network);
    const family = isIP(address);
    const max = family === 6 ? 128 : 32;
    const prefix = prefixText === undefined ? max : Number(prefixText);
    if (family === 0 || !Number.isInteger(prefix) || prefix < 0 || prefix > max) {
      throw new TypeError(`allow entry ${JSON.stringify(raw)} is not a CIDR range (10.0.0.0/8), an IP address, or one of ${ALLOW_WORDS.join(', ')}`);
    }
    const list = new BlockList();
    list.addSubnet(address, prefix, family === 6 ? 'ipv6' : 'ipv4');
    return { kind: 'block', list };
  });
}

/** Allow entries as options take them: each must parse (parseAllowList), the issue names the bad one. */
export const AllowListSchema = z.array(
  z.string().superRefine((entry, context) => {
    try {
      parseAllowList([entry]);
    } catch (error) {
      context.addIssue({ code: 'custom', message: (error as Error).message });
    }
  }),
);

/** A connection refused by a TargetPolicy (thrown before any byte of the request is sent). */
export class TargetRefusedError extends Error {
  readonly code = 'SW_TARGET_REFUSED';
  constructor(readonly reason: string) {
    super(`refused by the target policy: ${reason}`);
    this.name = 'TargetRefusedError';
  }
}

/** Whether `error` (or its cause, as clients wrap it) is a TargetRefusedError. */
export function targetRefusal(error: unknown): TargetRefusedError | undefined {
  for (let at: unknown = error, depth = 0; at !== undefined && at !== null && depth < 5; at = (at as { cause?: unknown }).cause, depth++) {
    if (at instanceof TargetRefusedError) return at;
  }
  return undefined;
}

export class TargetPolicy {
  readonly #selfPort: () => number | undefined;
  readonly #loopback: boolean;
  readonly #allowed: Allowed[];
  /** Why only loopback may be reached (said in the refusal), when only loopback may. */
  readonly #loopbackOnly: string | undefined;

  constructor(options: TargetPolicyOptions) {
    this.#selfPort = options.selfPort;
    this.#loopbackOnly = options.loopbackOnly;
    this.#loopback = options.loopback ?? true;
    this.#allowed = parseAllowList(options.allow ?? []);
  }

  /** Why a request to `hostname` (a name or an address, before any lookup) is refused; undefined when it may go on. */
  refuseName(hostname: string, port: number): string | undefined {
    const bare = bareAddress(hostname).replace(/\.$/, '');
    if (isIP(bare) !== 0) return this.refuseAddress(bare, port);
    if (METADATA_NAMES.has(bare) && !this.#wordAllowed('metadata')) return `${bare} is a cloud metadata service`;
    return undefined;
  }

  /** Why a connection to `address`:`port` (an IP address) is refused; undefined when it may go on. */
  refuseAddress(address: string, port: number): string | undefined {
    const bare = bareAddress(address);
    const family = familyOf(bare);
    if (isIP(bare) === 0) return `${address} is not an IP address`;
    if (port === this.#selfPort() && this.#isThisMachine(bare, family)) return `${bare}:${port} is the harness itself`;
    const explicitly = this.#allowed.some((entry) => entry.kind === 'block' && entry.list.check(bare, family));
    if (explicitly) return undefined;
    const metadata = METADATA.check(bare, family);
    if (metadata && !this.#wordAllowed('metadata')) return `${bare} is a cloud metadata address`;
    // Allowing `metadata` allows those addresses, not the rest of link-local around them.
    if (!metadata && LINK_LOCAL.check(bare, family) && !this.#wordAllowed('link-local')) return `${bare} is a link-local address`;
    if (UNSPECIFIED.check(bare, family)) return `${bare} is an unspecified address`;
    if (LOOPBACK.check(bare, family) && !this.#loopback && !this.#wordAllowed('loopback')) return `${bare} is a loopback address`;
    if (this.#loopbackOnly !== undefined && !LOOPBACK.check(bare, family)) return `${bare} is not a loopback address (${this.#loopbackOnly})`;
    return undefined;
  }

  /**
   * Why `url` may not be reached, looking up its name: the name itself, then every
   * address it resolves to now. Undefined when it may go on (the connection is still
   * checked when made: `lookup`).
   */
  async refuseUrl(url: string): Promise<string | undefined> {
    const target = new URL(url);
    const port = defaultPort(target);
    const hostname = bareAddress(target.hostname);
    const byName = this.refuseName(hostname, port);
    if (byName !== undefined || isIP(hostname) !== 0) return byName;
    let addresses: Array<{ address: string }>;
    try {
      addresses = await dnsLookup(hostname, { all: true });
    } catch (error) {
      return `${hostname} does not resolve (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
    }
    for (const { address } of addresses) {
      const refused = this.refuseAddress(address, port);
      if (refused !== undefined) return `${hostname}: ${refused}`;
    }
    return undefined;
  }

  /**
   * A `lookup` for node:http and node:net that refuses a name resolving to an address
   * this policy refuses, at connect time (a name may resolve elsewhere than when it was
   * checked). Addresses written as such are not looked up: check them with refuseName.
   */
  lookupFor(port: number): LookupFunction {
    const lookup = (
      hostname: string,
      options: LookupOptions,
      callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
    ): void => {
      nodeLookup(hostname, { ...options, all: true }, (error, addresses) => {
        if (error !== null) {
          callback(error, []);
          return;
        }
        for (const { address } of addresses) {
          const refused = this.refuseAddress(address, port);
          if (refused !== undefined) {
            callback(new TargetRefusedError(`${hostname}: ${refused}`) as NodeJS.ErrnoException, []);
            return;
          }
        }
        if (options.all === true) callback(null, addresses);
        else callback(null, addresses[0]?.address ?? '', addresses[0]?.family ?? 4);
      });
    };
    return lookup as unknown as LookupFunction;
  }

  #wordAllowed(word: (typeof ALLOW_WORDS)[number]): boolean {
    return this.#allowed.some((entry) => entry.kind === 'word' && entry.word === word);
  }

  /** Loopback, unspecified, or an address of one of this machine's interfaces. */
  #isThisMachine(address: string, family: 'ipv4' | 'ipv6'): boolean {
    if (LOOPBACK.check(address, family) || UNSPECIFIED.check(address, family)) return true;
    for (const list of Object.values(networkInterfaces())) {
      for (const info of list ?? []) if (bareAddress(info.address) === address) return true;
    }
    return false;
  }
}

/** The port a URL connects to (its scheme's default when none is written). */
export function defaultPort(url: URL): number {
  if (url.port !== '') return Number(url.port);
  return url.protocol === 'https:' ? 443 : 80;
}
