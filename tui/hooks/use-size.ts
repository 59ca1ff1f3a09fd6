// The terminal's size (columns x rows), following resizes; fixed sizes win (tests, bench).
import { useStdout } from 'ink';
import { useEffect, useState } from 'react';

export function useSize(fixed?: { width?: number | undefined; height?: number | undefined }): {
  width: number;
  height: number;
} {
  const { stdout } = useStdout();
  const read = () => ({
    width: fixed?.width ?? (stdout.columns > 0 ? stdout.columns : 80),
    // One line short of the terminal: a frame as tall as the terminal makes ink clear the screen each time.
    height: fixed?.height ?? (stdout.rows > 0 ? stdout.rows - 1 : 23),
  });
  const [size, setSize] = useState(read);
  useEffect(() => {
    if (fixed?.width !== undefined && fixed.height !== undefined) return;
    const onResize = () => setSize(read());
    stdout.on('resize', onResize);
    return () => {
      stdout.off('resize', onResize);
    };
  });
  return size;
}
