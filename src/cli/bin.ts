#!/usr/bin/env node
/** Executable entry of `ase`: runs `main` and turns its result into an exit code. */
import { AseError } from '../index.js';
import { main } from './main.js';

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    const text = error instanceof AseError ? `${error.code}: ${error.message}` : error instanceof Error ? (error.stack ?? error.message) : String(error);
    process.stderr.write(`ase: ${text}\n`);
    process.exitCode = 1;
  },
);
