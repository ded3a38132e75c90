import type { ProcessorGateway } from './processor-gateway.ts';

export interface ProcessorRegistry {
  /** The adapter of a gateway name (a merchant account's `gateway`); throws for an unknown name. */
  get(name: string): ProcessorGateway;
  /** The configured gateway names. */
  names(): string[];
}

export function createProcessorRegistry(adapters: ProcessorGateway[]): ProcessorRegistry {
  const byName = new Map<string, ProcessorGateway>();
  for (const adapter of adapters) {
    if (byName.has(adapter.name)) throw new Error(`Processor gateway "${adapter.name}" is registered twice`);
    byName.set(adapter.name, adapter);
  }
  return {
    get(name) {
      const adapter = byName.get(name);
      if (!adapter) {
        const known = [...byName.keys()].map((n) => `"${n}"`).join(', ') || 'none';
        throw new Error(`Unknown processor gateway "${name}" (configured gateways: ${known})`);
      }
      return adapter;
    },
    names() {
      return [...byName.keys()];
    },
  };
}
