/**
 * The evaluation's public entry point for the extension: probes asked of the
 * user's model (the "Check the Summary Against Your Model" command). The rest of
 * src/eval is the CLI harness (`npm run eval`).
 */
export { formatAnswerReport, runAnswerProbes } from './answers';
export { parseProbeFile } from './probes';
