import { MemoryEffectStore } from '../../src/stores/memory-effect-store.js';
import type { ManagedEffectStore } from '../../src/stores/index.js';
import { effectStoreConformance } from './conformance.js';

let clock = Date.now();

effectStoreConformance({
  name: 'memory',
  create: async (options) => new MemoryEffectStore({ now: () => clock, ...options }),
  sibling: async (store: ManagedEffectStore) => store,
  advance: async (ms) => {
    clock += ms;
  },
});
