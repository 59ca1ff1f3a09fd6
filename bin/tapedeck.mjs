#!/usr/bin/env node
// The `tapedeck` command: registers tsx's loader in-process and runs the TypeScript CLI.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
