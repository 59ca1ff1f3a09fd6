// A recording's strings are shown, never obeyed. A crafted recording can put terminal control
// sequences in any name (a table, a tool, the recorded command a replay asks before running): an
// escape that clears the line, moves the cursor or retitles the window could hide a warning or
// make a recorded command look like another. Everything the CLI and the TUI print passes here.

/**
 * C0 controls but tab and newline (CR, ESC, BEL, backspace…), DEL, C1 controls (the 8-bit CSI and
 * OSC), and the bidirectional overrides and isolates ("Trojan Source").
 */
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/**
 * The text with every control character written out as an escape (`\x1b`, `\u009b`, `\u202e`):
 * shown, never obeyed. DEL, C1 and the bidi controls take the `\u` form, which is also JSON's
 * escape of the same character: `--json` output holds them raw inside its strings (JSON.stringify
 * escapes only C0), so what a script parses is still JSON, and the same text.
 */
export function terminalSafe(text: string): string {
  return text.replace(UNSAFE, (c) => {
    const code = c.charCodeAt(0);
    return code < 0x7f ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}
