/** Types for `sim/anilist-simulator.mjs`, so TypeScript tests and demos get checked calls. */
import type { Simulator, SimulatorOptions } from '../types/simulator.js';

export type {
  Simulator,
  SimulatorOptions,
  SimulatorQuota,
  SimulatorScript,
  SimulatorStats,
} from '../types/simulator.js';

export function startSimulator(options?: SimulatorOptions): Promise<Simulator>;
