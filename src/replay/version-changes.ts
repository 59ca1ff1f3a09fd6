// The packages a recording names (manifest.runtime.sdkVersions) that the agent loads at another
// version now: compared and said in one line. Pure, and light: the CLI prints it beside divergences.

/** A package the recording names at another version than the agent loads now; `now` null: found no more. */
export interface VersionChange {
  name: string;
  recorded: string;
  now: string | null;
}

/**
 * The recorded packages the agent now loads at another version or not at all, by name. A package
 * the recording does not name is not compared: the recorder that made it may not have looked for it.
 */
export function versionChanges(recorded: Record<string, string>, now: Record<string, string>): VersionChange[] {
  return Object.keys(recorded)
    .sort()
    .flatMap((name) => {
      const was = recorded[name];
      const is = Object.hasOwn(now, name) ? now[name] : undefined;
      return was === undefined || was === is ? [] : [{ name, recorded: was, now: is ?? null }];
    });
}

const SHOWN = 8;

/** Versions a recording names are its own strings: shown short. */
const short = (text: string) => (text.length > 60 ? `${text.slice(0, 59)}…` : text);

/**
 * One line for the changes: `drizzle-orm 0.44.2 → 0.45.4, pg 8.11.0 → 8.16.0; openai no longer
 * found: …`. The replay's warnings carry it, and the CLI repeats it beside the divergences.
 */
export function describeVersionChanges(changes: readonly VersionChange[]): string {
  const list = (items: string[]) =>
    items.slice(0, SHOWN).join(', ') + (items.length > SHOWN ? ` and ${items.length - SHOWN} more` : '');
  const changed = changes.flatMap((c) =>
    c.now === null ? [] : [`${short(c.name)} ${short(c.recorded)} → ${short(c.now)}`],
  );
  const gone = changes.flatMap((c) => (c.now === null ? [short(c.name)] : []));
  const parts = [
    ...(changed.length > 0 ? [list(changed)] : []),
    ...(gone.length > 0 ? [`${list(gone)} no longer found`] : []),
  ];
  return `the agent loads other package versions than recorded (${parts.join('; ')}): its requests (model calls, SQL, headers) may differ from the recorded ones`;
}
