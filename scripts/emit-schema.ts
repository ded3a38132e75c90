/** `npm run schema:emit`: writes the GraphQL SDL to schema/schema.graphql (committed; a test fails on drift). */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { printSchema } from 'graphql';
import { buildGatewaySchema } from '../api/graphql/schema.ts';
import { REPO_ROOT } from './child-process.ts';

export const SDL_PATH = path.join(REPO_ROOT, 'schema/schema.graphql');

writeFileSync(SDL_PATH, `${printSchema(await buildGatewaySchema())}\n`);
process.stdout.write(`Wrote ${path.relative(REPO_ROOT, SDL_PATH)}\n`);
