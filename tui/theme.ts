// Colour on or off (NO_COLOR), and the few colours the UI uses. Components ask `tint(name)`,
// which is undefined when colour is off, so ink emits no colour codes at all.
import { createContext, useContext } from 'react';

export type Tint = 'accent' | 'muted' | 'good' | 'bad' | 'warn' | 'diverge' | 'model' | 'tool';

const COLORS: Record<Tint, string> = {
  accent: 'cyan',
  muted: 'gray',
  good: 'green',
  bad: 'red',
  warn: 'yellow',
  diverge: 'magenta',
  model: 'blue',
  tool: 'yellow',
};

export interface Theme {
  color: boolean;
  tint(name: Tint): string | undefined;
  /** A raw ink colour name, or undefined when colour is off. */
  raw(color: string): string | undefined;
}

export function makeTheme(color: boolean): Theme {
  return {
    color,
    tint: (name) => (color ? COLORS[name] : undefined),
    raw: (c) => (color ? c : undefined),
  };
}

/** Colour is on unless NO_COLOR is set to anything non-empty (https://no-color.org). */
export function colorFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  return !(env.NO_COLOR !== undefined && env.NO_COLOR !== '');
}

export const ThemeContext = createContext<Theme>(makeTheme(true));

export function useTheme(): Theme {
  return useContext(ThemeContext);
}
