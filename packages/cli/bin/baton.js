#!/usr/bin/env node
// Entry shim: registers tsx so the TypeScript sources run without a build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/main.ts');
process.exitCode = await main(process.argv);
