// Phase timings moved to the root of src/env (phaseTimes.ts): a run's and an episode's phases use them too.
export { phaseTotals, timed, type PhaseSink, type PhaseTime } from '../phaseTimes';
