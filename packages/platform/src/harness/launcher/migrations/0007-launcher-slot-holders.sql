-- The launcher: each slot names its holder's presence session (launcher/slot-holder.ts), the
-- PostgreSQL session in which the holding harness keeps an advisory lock for as long as it
-- runs: that session's backend pid and start. A slot whose holder's session ended while the
-- server ran is free, whatever its lease says. NULL (a row of an older harness, or of a
-- holder without its session): the lease alone decides.
ALTER TABLE sw_launcher_slots ADD COLUMN holder_pid integer, ADD COLUMN holder_started timestamptz;
