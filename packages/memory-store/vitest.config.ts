import { defineProject } from 'vitest/config';
import { packageProject } from '../../vitest.source.ts';

export default defineProject(packageProject('memory-store'));
