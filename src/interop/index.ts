// Interop with the ecosystem's formats: OpenTelemetry GenAI spans (export, import), HAR, msw.
export { harToRecording, readHarFile, recordingToHar } from './har.js';
export { recordingToMsw } from './msw.js';
export { recordingToOtlp, sendOtlp } from './otlp-export.js';
export { IMPORTED_TAG, type ImportOptions, type ImportResult, otlpToRecording, readOtlpFile } from './otlp-import.js';
export { type OtlpTraces, TracesSchema } from './otlp-schema.js';
