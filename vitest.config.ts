import { defineConfig } from 'vitest/config';

export default defineConfig({
  // type-graphql needs legacy decorators with design-type metadata.
  oxc: { decorator: { legacy: true, emitDecoratorMetadata: true } } as never,
  resolve: { dedupe: ['graphql'] },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 2,
    reporters: ['default'],
  },
});
