// The files the fs tracker knows, by relative path ('/'-separated, files only), with an index of
// the folders that hold them: what it knew under a path that is gone or is a folder is found by
// walking that folder's children, not by a pass over every known file (a step with many temp files
// made and removed would otherwise cost their number times the size of the root). A path that is
// neither a known file nor a known folder costs two lookups.

/** The folder holding `rel`: '' for a file at the root. */
const parentOf = (rel: string): string => {
  const slash = rel.lastIndexOf('/');
  return slash === -1 ? '' : rel.slice(0, slash);
};

export class KnownFiles<T> {
  private readonly files = new Map<string, T>();
  /**
   * Each folder ('' the root) that holds a known file at any depth, to its direct children (files
   * and folders, by their full relative path). A folder is here exactly while it holds one, and is
   * then one of its parent's children.
   */
  private readonly folders = new Map<string, Set<string>>();

  get size(): number {
    return this.files.size;
  }

  get(rel: string): T | undefined {
    return this.files.get(rel);
  }

  has(rel: string): boolean {
    return this.files.has(rel);
  }

  keys(): IterableIterator<string> {
    return this.files.keys();
  }

  set(rel: string, value: T): this {
    const isNew = !this.files.has(rel);
    this.files.set(rel, value);
    if (isNew) this.link(rel);
    return this;
  }

  delete(rel: string): boolean {
    if (!this.files.delete(rel)) return false;
    this.unlink(rel);
    return true;
  }

  /** Every known file at `rel` or below it ('' the whole root), as a list: safe to delete while going through it. */
  under(rel: string): string[] {
    const out: string[] = [];
    if (this.files.has(rel)) out.push(rel);
    const pending = [rel];
    for (let folder = pending.pop(); folder !== undefined; folder = pending.pop()) {
      for (const child of this.folders.get(folder) ?? []) {
        if (this.files.has(child)) out.push(child);
        if (this.folders.has(child)) pending.push(child);
      }
    }
    return out;
  }

  /** Makes `rel` a child of its folder, and each folder up a child of its own, up to one already known. */
  private link(rel: string): void {
    if (rel === '') return;
    for (let node = rel; ; ) {
      const parent = parentOf(node);
      const children = this.folders.get(parent);
      if (children !== undefined) {
        children.add(node);
        return;
      }
      this.folders.set(parent, new Set([node]));
      if (parent === '') return;
      node = parent;
    }
  }

  /** Drops `rel` from its folder unless it is still a folder itself, and each folder left empty from its own. */
  private unlink(rel: string): void {
    for (let node = rel; node !== '' && !this.files.has(node) && !this.folders.has(node); ) {
      const parent = parentOf(node);
      const children = this.folders.get(parent);
      if (children === undefined) return;
      children.delete(node);
      if (children.size > 0) return;
      this.folders.delete(parent);
      node = parent;
    }
  }

  /** The folders the index holds (for tests: one left behind would be a leak). */
  get folderCount(): number {
    return this.folders.size;
  }
}
