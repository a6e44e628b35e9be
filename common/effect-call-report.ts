// The report of one effect call is the core's shape (`src/effects/effect-report.ts`): the engine
// without Temporal and the Temporal activities report the same thing, so there is one type.
import type { EffectCallReport } from '../src/effects/effect-report.js';

export type { EffectCallReport, EffectOutcome } from '../src/effects/effect-report.js';

/**
 * The former name of {@link EffectCallReport} in the Temporal entry points: the same shape.
 *
 * @deprecated Use `EffectCallReport`; this alias goes away in the next minor version.
 */
export type EffectReportEntry = EffectCallReport;
