/** `npm run docs:config`: regenerates docs/configuration.md from the settings table. */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { renderConfigurationDoc } from '../platform/config-doc.ts';
import { REPO_ROOT } from './child-process.ts';

writeFileSync(path.join(REPO_ROOT, 'docs/configuration.md'), renderConfigurationDoc());
