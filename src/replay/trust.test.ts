import { describe, expect, it } from 'vitest';
import { showCommand } from './trust.js';

describe('showCommand: a recorded command line shown on one terminal line', () => {
  it('quotes what a shell would split or expand, and leaves plain words alone', () => {
    expect(showCommand(['node', 'agent.mjs', '--model=gpt-4o'])).toBe('node agent.mjs --model=gpt-4o');
    expect(showCommand(['sh', '-c', "echo 'hi'; rm -rf ~"])).toBe(`sh -c 'echo '\\''hi'\\''; rm -rf ~'`);
    expect(showCommand(['a b', ''])).toBe("'a b' ''");
  });

  it('never carries a newline, an escape sequence or a bidi override to the terminal', () => {
    const shown = showCommand(['node', 'x.mjs\n\u001b[2J\u001b]0;owned\u0007', 'safe\u202eexe.js']);
    expect(shown).not.toMatch(/[\n\r\u001b\u0007\u202e]/);
    expect(shown).toBe("node 'x.mjs??[2J?]0;owned?' 'safe?exe.js'");
  });

  it('is capped, whatever the recording holds', () => {
    const shown = showCommand(['node', 'x'.repeat(10_000)]);
    expect(shown.length).toBe(300);
    expect(shown.endsWith('…')).toBe(true);
  });
});
