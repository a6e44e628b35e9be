import { OpenTelemetry, OpenTelemetryIdGenerator } from '@ai-sdk/otel';
import { Resource } from '@opentelemetry/resources';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { OpenTelemetryPlugin } from '@temporalio/interceptors-opentelemetry';
import { registerTelemetry } from 'ai';

/** Tracing for one process (a worker or a client); call it once, before creating either. */
export function setUpTracing(serviceName: string, spans: SpanProcessor) {
  const resource = new Resource({ 'service.name': serviceName });
  // The AI SDK's bridge for runs that span processes: it gives a run's spans their ids.
  const ids = new OpenTelemetryIdGenerator();
  const provider = new NodeTracerProvider({ resource, idGenerator: ids, sampler: ids });
  provider.addSpanProcessor(spans);
  // Global provider, AsyncLocalStorage context manager, W3C propagator: without them each
  // activity's spans start a trace of their own.
  provider.register();
  registerTelemetry(new OpenTelemetry({ durable: ids, agentSpanName: 'functionId' }));
  // Workflow, activity and client spans; workflow spans leave the sandbox through `spans`.
  const plugin = new OpenTelemetryPlugin({ resource, spanProcessor: spans });
  return { plugin, provider };
}
