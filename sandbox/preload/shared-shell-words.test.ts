// A shell's command string read as a POSIX shell splits it: quotes, escapes, substitutions,
// operators, redirections, comments and here-documents; linear on hostile input.
import { describe, expect, it } from 'vitest';
import { shellCommands } from './shared-shell-words.mjs';

describe('shellCommands', () => {
  it('splits at operators and keeps quoted words whole, assignments included', () => {
    expect(shellCommands(`cd /x && A="1 2" python3 -S 'a b.py' >log`)).toEqual([
      ['cd', '/x'],
      ['A=1 2', 'python3', '-S', 'a b.py'],
    ]);
    expect(shellCommands('a||b;;c|d&e\nf')).toEqual([['a'], ['b'], ['c'], ['d'], ['e'], ['f']]);
    expect(shellCommands(`py"thon3" "-S" a\\ b c\\\nd ""`)).toEqual([['python3', '-S', 'a b', 'cd', '']]);
    expect(shellCommands(`echo "a \\"b\\" \\$c \\d"`)).toEqual([['echo', 'a "b" $c \\d']]);
  });

  it('reads command substitutions, subshells and groups as commands of their own', () => {
    expect(shellCommands('echo $(python3 -S a) | tee')).toEqual([['python3', '-S', 'a'], ['echo', '$()'], ['tee']]);
    expect(shellCommands('echo "$(python3 -E "x y")"')).toEqual([
      ['python3', '-E', 'x y'],
      ['echo', '$()'],
    ]);
    expect(shellCommands('echo `python3 -I a`')).toEqual([
      ['python3', '-I', 'a'],
      ['echo', '$()'],
    ]);
    expect(shellCommands('(cd x; python3 -S a) & wait')).toEqual([['cd', 'x'], ['python3', '-S', 'a'], ['wait']]);
    expect(shellCommands('$((1+2)) python3')).toEqual([['1+2'], ['$()', 'python3']]);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell's parameter expansion, as written
    const expansion = '${A:-python3 -S}';
    expect(shellCommands(`echo ${expansion}`)).toEqual([['echo', expansion]]);
  });

  it('drops redirections, comments and here-documents', () => {
    expect(shellCommands('python3 <in 2>/dev/null >>out 2>&1 -E x')).toEqual([['python3', '-E', 'x']]);
    expect(shellCommands('12>x y "12">z')).toEqual([['y', '12']]);
    expect(shellCommands('x # python3 -S\nx#y z')).toEqual([['x'], ['x#y', 'z']]);
    expect(shellCommands('cat <<EOF\npython3 -S fake\nEOF\npython3 -I real')).toEqual([
      ['cat'],
      ['python3', '-I', 'real'],
    ]);
    expect(shellCommands("cat <<-'E' >f\n\tpython3 -S fake\n\tE\nls")).toEqual([['cat'], ['ls']]);
  });

  it('ends unterminated quotes and substitutions at the end of the string', () => {
    expect(shellCommands("echo 'open")).toEqual([['echo', 'open']]);
    expect(shellCommands('echo "open $(python3 -S')).toEqual([
      ['python3', '-S'],
      ['echo', 'open $()'],
    ]);
    expect(shellCommands('a\\')).toEqual([['a']]);
  });

  it('reads hostile strings in linear time', () => {
    const n = 200_000;
    for (const unit of ['$(', '`', '"$(', "'", '\\', '<<a\n', '((', '))', '${', '1>', 'a ', '"\\"'])
      expect(() => shellCommands(unit.repeat(n / unit.length))).not.toThrow();
  });
});
