/**
 * @module cli/commands/volume-commands
 * `serverless-worker volume create|list|get|resize|delete`: network volumes through the
 * management API (/v1/networkvolumes), with the same connection flags, output and failures
 * as `template` and `endpoint`: records as JSON on stdout (`list`: a table on a terminal),
 * notes on stderr, a refusal one line with the server's message and code, exit status 1.
 */
import type { Command } from 'commander';
import { integerFlag } from './management-flags.js';
import { cliOutput, client, withConnection, type ConnectionFlags } from './management-output.js';
import { outputMode, withOutputFlags, type OutputFlags } from './output-mode.js';

export function registerVolumeCommands(program: Command): void {
  const out = cliOutput(program);
  const volume = program.command('volume').description('network volumes');
  withConnection(
    volume
      .command('create')
      .description('create a network volume')
      .requiredOption('--name <name>', 'volume name')
      .requiredOption('--data-center-id <id>', 'data center the volume lives in')
      .requiredOption('--size <gb>', 'size in GB, 0 to 4000'),
  ).action(async (flags: ConnectionFlags & { name: string; dataCenterId: string; size: string }) => {
    const size = integerFlag('--size', flags.size) ?? 0;
    const created = await client(flags).createNetworkVolume({ name: flags.name, dataCenterId: flags.dataCenterId, size });
    out.note(`created network volume "${flags.name}" (id ${created.id}, ${created.size} GB)`);
    out.record(created);
  });

  withConnection(withOutputFlags(volume.command('list').description('list the network volumes: a table on a terminal, JSON when piped'))).action(
    async (flags: ConnectionFlags & OutputFlags) => {
      const mode = outputMode(flags);
      const volumes = await client(flags).listNetworkVolumes();
      if (mode === 'json') return out.record(volumes);
      out.table(
        ['ID', 'NAME', 'DATA CENTER', 'SIZE'],
        volumes.map((v) => [v.id, v.name, v.dataCenterId, `${v.size} GB`]),
      );
    },
  );

  withConnection(volume.command('get').description('show one network volume').argument('<id>', 'network volume id')).action(
    async (id: string, flags: ConnectionFlags) => {
      out.record(await client(flags).getNetworkVolume(id));
    },
  );

  withConnection(
    volume
      .command('resize')
      .description('grow a network volume (sizes only grow)')
      .argument('<id>', 'network volume id')
      .requiredOption('--size <gb>', 'new size in GB, greater than the current size, at most 4000'),
  ).action(async (id: string, flags: ConnectionFlags & { size: string }) => {
    const size = integerFlag('--size', flags.size) ?? 0;
    const updated = await client(flags).updateNetworkVolume(id, { size });
    out.note(`resized network volume ${updated.id} to ${updated.size} GB`);
    out.record(updated);
  });

  withConnection(volume.command('delete').description('delete a network volume (its data is gone)').argument('<id>', 'network volume id')).action(
    async (id: string, flags: ConnectionFlags) => {
      await client(flags).deleteNetworkVolume(id);
      out.note(`deleted network volume ${id}`);
    },
  );
}
