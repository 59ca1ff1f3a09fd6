// Where the warehouse is: --db (a postgres:// URL or a PGlite folder), else
// TAPEDECK_DATABASE_URL, else the embedded default folder.
import { DEFAULT_WAREHOUSE_DIR, type WarehouseOptions } from './warehouse.js';

const isUrl = (value: string): boolean => /^postgres(ql)?:\/\//.test(value);

/** Resolves the CLI's --db against the environment. */
export function warehouseOptionsFrom(db: string | undefined, env: NodeJS.ProcessEnv = process.env): WarehouseOptions {
  const chosen = db ?? env.TAPEDECK_DATABASE_URL;
  if (chosen === undefined || chosen === '') return { dir: DEFAULT_WAREHOUSE_DIR };
  return isUrl(chosen) ? { url: chosen } : { dir: chosen };
}
