import type * as OpenTelemetryApi from '@opentelemetry/api';

/** `@opentelemetry/api`, as this process has it. */
export type OtelApi = typeof OpenTelemetryApi;

let loading: Promise<OtelApi | undefined> | undefined;

/**
 * Loads `@opentelemetry/api` (an optional peer) once per process. Without the package there is no
 * tracing, so nothing to report: it resolves to `undefined` and the spans of this library are not
 * made (a package that is there but cannot be loaded says so once, on the console). With it but
 * without an SDK registered, the API itself is a no-op.
 */
export function loadOpenTelemetry(): Promise<OtelApi | undefined> {
  loading ??= import('@opentelemetry/api').catch((error: unknown) => {
    if ((error as { code?: unknown }).code !== 'ERR_MODULE_NOT_FOUND') {
      console.warn(`[chamvi] @opentelemetry/api could not be loaded, so this library makes no spans: ${String(error)}`);
    }
    return undefined;
  });
  return loading;
}

/** Sets attributes on the span active in the current context (an activity's `RunActivity` span), if any. */
export async function annotateActivitySpan(attributes: OpenTelemetryApi.Attributes): Promise<void> {
  (await loadOpenTelemetry())?.trace.getActiveSpan()?.setAttributes(attributes);
}

/** The failure type a span reports: an ApplicationFailure's `type`, else the error's name. */
export function errorType(error: unknown): string {
  if (typeof error === 'object' && error !== null) {
    const type = (error as { type?: unknown }).type;
    if (typeof type === 'string' && type !== '') return type;
    const name = (error as { name?: unknown }).name;
    if (typeof name === 'string' && name !== '') return name;
  }
  return 'Error';
}
