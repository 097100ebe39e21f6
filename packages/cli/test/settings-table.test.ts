import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { DAEMON_CONFIG_KEYS } from '../src/daemon/daemon-config.ts';
import { DAEMON_FLAGS, type AnyFlag } from '../src/flags/command-flags.ts';
import { CLUSTER, COMMON, DAEMON, GATEWAY, HANDOFF, LISTING, NATS, REPLAY } from '../src/flags/flag-catalogue.ts';
import { SETTINGS, configKey, envName, envValue, flagName, settingsWith, type ConfigSetting, type EnvSetting, type FlagSetting, type SettingName } from '../src/flags/settings-table.ts';
import { buildProgram } from '../src/main.ts';
import { captureIo } from './helpers/capture-io.ts';

/**
 * One table names every setting; the flags, the configuration file's keys, the variables the CLI names and the README's
 * table of settings are held to it, so a surface that spells a setting its own way, or lacks a setting the table gives
 * it, fails here.
 */

const SRC = join(import.meta.dirname, '..', 'src');
const README = join(import.meta.dirname, '..', '..', '..', 'README.md');

function has(name: SettingName, surface: 'flag' | 'config' | 'env'): boolean {
  return (SETTINGS[name] as Partial<Record<string, unknown>>)[surface] !== undefined;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

/** Every command of the program, subcommands included. */
function commands(command: Command): Command[] {
  return [command, ...command.commands.flatMap(commands)];
}

/** The README's table of settings: one row a setting, the names in its flag, configuration file and environment cells. */
function readmeRows(): { line: string; flags: string[]; configs: string[]; envs: string[] }[] {
  const lines = readFileSync(README, 'utf8').split('\n');
  const header = lines.indexOf('| flag | configuration file | environment | default and meaning |');
  expect(header, 'the README has the table of settings').toBeGreaterThan(0);
  const rows = [];
  for (const line of lines.slice(header + 2)) {
    if (!line.startsWith('|')) break;
    const cells = line.replace(/^\|/, '').replace(/\|$/, '').split('|');
    const spans = (cell: string | undefined): string[] => [...(cell ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1] as string);
    rows.push({
      line,
      flags: spans(cells[0]).map((s) => s.split(' ')[0] as string),
      configs: spans(cells[1]),
      envs: spans(cells[2]),
    });
  }
  return rows;
}

describe('the settings table', () => {
  it('spells a setting per surface from its one name', () => {
    expect(flagName('maxQueuedRequests')).toBe('--max-queued-requests');
    expect(configKey('maxQueuedRequests')).toBe('max_queued_requests');
    expect(envName('dataDir')).toBe('BATON_DATA_DIR');
    expect(envName('disableCheckpoint')).toBe('BATON_DISABLE_CHECKPOINT');
    // Names kept from before the table, and another tool's convention.
    expect(envName('nats')).toBe('BATON_NATS_URL');
    expect(envName('openaiApiKey')).toBe('OPENAI_API_KEY');
    expect(envValue({ BATON_NATS_TOKEN: 't' }, 'natsToken')).toBe('t');
    expect(envValue({ BATON_NATS_TOKEN: '' }, 'natsToken')).toBeUndefined();
  });

  it('has a flag in the catalogue for exactly the settings with one, spelled from the name', () => {
    const groups: readonly Record<string, AnyFlag>[] = [NATS, COMMON, DAEMON, CLUSTER, GATEWAY, HANDOFF, LISTING, REPLAY];
    const catalogue = groups.flatMap((group) => Object.values(group));
    for (const f of catalogue) expect(f.spec.flags.split(' ')[0], f.key).toBe(flagName(f.key as FlagSetting));
    expect([...new Set(catalogue.map((f) => f.key))].sort()).toEqual([...settingsWith('flag')].sort());
  });

  it("gives every command's visible flags the names of settings with a flag (older spellings are hidden aliases)", () => {
    const names = new Set(settingsWith('flag').map((s) => flagName(s as FlagSetting)));
    for (const command of commands(buildProgram(captureIo(), {}, () => {}))) {
      const options = command.options as readonly { long?: string; hidden: boolean }[];
      for (const o of options.filter((x) => !x.hidden)) expect(names.has(o.long ?? ''), `${command.name()} ${o.long}`).toBe(true);
    }
  });

  it("has the configuration file's top-level keys for exactly the settings with one", () => {
    expect([...DAEMON_CONFIG_KEYS].sort()).toEqual(settingsWith('config').map((s) => configKey(s as ConfigSetting)).sort());
  });

  it('names in the CLI only the variables of the table', () => {
    const variables = new Set(settingsWith('env').map((s) => envName(s as EnvSetting)));
    const named = new Map<string, string>();
    for (const file of sourceFiles(SRC)) {
      const text = readFileSync(file, 'utf8');
      // Constants spelled like variables (`ANTHROPIC_DEFAULT_BASE_URL`) are identifiers, not variables.
      const constants = new Set([...text.matchAll(/\bconst\s+([A-Z][A-Z0-9_]*)\b/g)].map((m) => m[1]));
      for (const m of text.matchAll(/\b(?:BATON|OPENAI|ANTHROPIC)_[A-Z0-9_]*[A-Z0-9]\b/g)) if (!constants.has(m[0])) named.set(m[0], file);
    }
    expect([...named].filter(([name]) => !variables.has(name))).toEqual([]);
    expect(named.size).toBeGreaterThan(0);
  });

  it("has the README's table name each setting of baton daemon, the configuration file and the environment as the table does", () => {
    const rows = readmeRows();
    const byName = new Map<string, SettingName>();
    for (const s of Object.keys(SETTINGS) as SettingName[]) {
      if (has(s, 'flag')) byName.set(flagName(s as FlagSetting), s);
      if (has(s, 'config')) byName.set(configKey(s as ConfigSetting), s);
      if (has(s, 'env')) byName.set(envName(s as EnvSetting), s);
    }
    const documented: SettingName[] = [];
    for (const row of rows) {
      const settings = new Set([...row.flags, ...row.configs, ...row.envs].map((n) => byName.get(n) ?? `unknown name ${n}`));
      expect([...settings], row.line).toHaveLength(1);
      const s = [...settings][0] as SettingName;
      expect({ flags: row.flags, configs: row.configs, envs: row.envs }, row.line).toEqual({
        flags: has(s, 'flag') ? [flagName(s as FlagSetting)] : [],
        configs: has(s, 'config') ? [configKey(s as ConfigSetting)] : [],
        envs: has(s, 'env') ? [envName(s as EnvSetting)] : [],
      });
      documented.push(s);
    }
    expect(documented.length, 'one row a setting').toBe(new Set(documented).size);
    const expected = new Set<SettingName>([...DAEMON_FLAGS.map((f) => f.key), ...settingsWith('config'), ...settingsWith('env')]);
    expect([...expected].filter((s) => !documented.includes(s))).toEqual([]);
  });
});
