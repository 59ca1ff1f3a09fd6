// Paths inside a recording (snapshot keys, fs.changed paths) must stay inside their root.

/**
 * Why `path` is not a safe POSIX path relative to a root, or undefined when it is.
 * Rejects absolute paths, drive letters, backslashes, NUL and control characters,
 * and empty, `.` or `..` segments: `a/b.txt` is fine, `../../etc/passwd` is not.
 */
export function unsafePathReason(path: string): string | undefined {
  if (path.length === 0) return 'is empty';
  if (path.length > 4096) return 'is longer than 4096 characters';
  if (/[\u0000-\u001f]/.test(path)) return 'contains a NUL or control character';
  if (path.includes('\\')) return 'contains a backslash (paths are POSIX, relative to the root)';
  if (path.startsWith('/')) return 'is absolute (paths are relative to the root)';
  if (/^[A-Za-z]:/.test(path)) return 'starts with a drive letter';
  for (const segment of path.split('/')) {
    if (segment === '..') return "escapes the root with '..'";
    if (segment === '' || segment === '.') return "has an empty or '.' segment (write it normalised, e.g. a/b.txt)";
  }
  return undefined;
}

export function isSafeRelativePath(path: string): boolean {
  return unsafePathReason(path) === undefined;
}
