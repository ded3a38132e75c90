import type { Config } from '../platform/config.ts';
import { createProcessorRegistry, type ProcessorRegistry } from '../adapters/processors/registry.ts';
import { createSandboxAdapter } from '../adapters/processors/sandbox.adapter.ts';

/** The processor adapters this deployment can reach; a real processor's adapter joins here. */
export function processorsFromConfig(config: Config): ProcessorRegistry {
  return createProcessorRegistry(config.sandboxProcessorUrl ? [createSandboxAdapter({ baseUrl: config.sandboxProcessorUrl })] : []);
}
