// How activity options layer, in the style of openai-agents' runner-layering tests: library
// defaults < a registration's toolDefaults < its tools[name] (the model step plans the last two,
// the workflow puts them over the defaults), and defaults < activityOptions.modelStep for model
// steps. Later layers win field by field, retry is merged field by field, undefined is ignored.
import { describe, expect, it } from '@jest/globals';
import {
  DEFAULT_MODEL_STEP_OPTIONS,
  DEFAULT_STORE_OPTIONS,
  DEFAULT_TOOL_OPTIONS,
  mergeActivityOptions,
  toActivityOptions,
  type JsonActivityOptions,
} from '../../common/activity-options.js';

/** What a tool call's activity gets: the workflow's merge over the model step's plan. */
const toolActivity = (toolDefaults?: JsonActivityOptions, forTool?: JsonActivityOptions) =>
  toActivityOptions(DEFAULT_TOOL_OPTIONS, mergeActivityOptions(toolDefaults, forTool));

const withoutTypes = ({ retry, ...rest }: ReturnType<typeof toActivityOptions>) => {
  const { nonRetryableErrorTypes: _types, ...retryFields } = retry ?? {};
  return { ...rest, retry: retryFields };
};

describe('activity option layering', () => {
  it('library defaults alone: the tool defaults, without a list of non-retryable types (the activities enforce the catalogue)', () => {
    const options = toolActivity();
    expect(withoutTypes(options)).toEqual({
      startToCloseTimeout: '10 minutes',
      heartbeatTimeout: '30 seconds',
      retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 10 },
    });
    expect(options.retry?.nonRetryableErrorTypes).toBeUndefined();
  });

  it('toolDefaults over the library defaults, field by field', () => {
    expect(withoutTypes(toolActivity({ heartbeatTimeout: '5 seconds', taskQueue: 'tools' }))).toEqual({
      startToCloseTimeout: '10 minutes',
      heartbeatTimeout: '5 seconds',
      taskQueue: 'tools',
      retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 10 },
    });
  });

  it('tools[name] over toolDefaults over the library defaults', () => {
    const options = toolActivity(
      { heartbeatTimeout: '5 seconds', startToCloseTimeout: '2 minutes' },
      { startToCloseTimeout: '30 seconds', scheduleToCloseTimeout: '1 hour' },
    );
    expect(withoutTypes(options)).toMatchObject({
      startToCloseTimeout: '30 seconds',
      scheduleToCloseTimeout: '1 hour',
      heartbeatTimeout: '5 seconds',
    });
  });

  it('retry is merged field by field across all three layers', () => {
    const options = toolActivity(
      { retry: { maximumAttempts: 4, maximumInterval: '10 seconds' } },
      { retry: { initialInterval: '10 ms' } },
    );
    expect(options.retry).toMatchObject({
      initialInterval: '10 ms',
      backoffCoefficient: 2,
      maximumInterval: '10 seconds',
      maximumAttempts: 4,
    });
  });

  it('an undefined field in any layer keeps what the layers before it said', () => {
    const options = toolActivity(
      { heartbeatTimeout: '5 seconds', startToCloseTimeout: undefined, retry: { maximumAttempts: 4 } },
      {
        heartbeatTimeout: undefined,
        startToCloseTimeout: undefined,
        retry: { maximumAttempts: undefined, initialInterval: undefined, backoffCoefficient: 3 },
      },
    );
    expect(withoutTypes(options)).toEqual({
      startToCloseTimeout: '10 minutes',
      heartbeatTimeout: '5 seconds',
      retry: { initialInterval: '1 second', backoffCoefficient: 3, maximumInterval: '1 minute', maximumAttempts: 4 },
    });
  });

  it('an undefined layer, an undefined retry and an empty layer change nothing', () => {
    const plain = toolActivity();
    expect(toActivityOptions(DEFAULT_TOOL_OPTIONS, undefined, {}, { retry: undefined })).toEqual(plain);
    expect(mergeActivityOptions(undefined, { retry: {} })).toEqual({});
  });

  it('the model step: defaults < activityOptions.modelStep, with undefined ignored', () => {
    const options = toActivityOptions(DEFAULT_MODEL_STEP_OPTIONS, {
      startToCloseTimeout: undefined,
      retry: { maximumAttempts: 2, initialInterval: undefined },
    });
    expect(withoutTypes(options)).toEqual({
      startToCloseTimeout: '5 minutes',
      heartbeatTimeout: '30 seconds',
      retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 2 },
    });
  });

  it('the record activity keeps retrying without limit unless a layer sets one', () => {
    expect(
      toActivityOptions(DEFAULT_STORE_OPTIONS, { retry: { maximumAttempts: undefined } }).retry,
    ).not.toHaveProperty('maximumAttempts');
    expect(toActivityOptions(DEFAULT_STORE_OPTIONS, { retry: { maximumAttempts: 50 } }).retry?.maximumAttempts).toBe(
      50,
    );
  });

  it("a later layer's non-retryable types replace an earlier layer's; the catalogue's are not added", () => {
    const types = toolActivity(
      { retry: { nonRetryableErrorTypes: ['MineError'] } },
      { retry: { nonRetryableErrorTypes: ['TheirsError', 'ToolNotAllowedError'] } },
    ).retry?.nonRetryableErrorTypes;
    expect(types?.slice(0, 2)).toEqual(['TheirsError', 'ToolNotAllowedError']);
    expect(types).not.toContain('MineError');
    expect(types).toEqual(['TheirsError', 'ToolNotAllowedError']);
  });

  it('merging leaves every layer as it was', () => {
    const defaults = { retry: { maximumAttempts: 4 } };
    const forTool = { retry: { initialInterval: '10 ms' } };
    mergeActivityOptions(defaults, forTool);
    expect(defaults).toEqual({ retry: { maximumAttempts: 4 } });
    expect(forTool).toEqual({ retry: { initialInterval: '10 ms' } });
  });
});
