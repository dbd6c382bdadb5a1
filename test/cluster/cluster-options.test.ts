import { describe, expect, it } from 'vitest';
import { createRuntime, isRuntimeError } from 'agentlanes';
import { scriptedModel } from 'agentlanes/testing';
import { clusterJobSettings, clusterTiming } from '../../src/cluster/cluster-options.js';
import { postgresUrl } from '../support/postgres.js';

/** The error `run` throws (undefined when it does not). */
function errorOf(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('clusterTiming', () => {
  it('fills the documented defaults when nothing is given', () => {
    expect(clusterTiming({ connectionString: postgresUrl })).toEqual({
      leaseMs: 10_000,
      renewMs: 3_333,
      pollMs: 500,
      scanMs: 2_000,
    });
  });

  it('refuses a renewal slower than half the lease with invalid_input', () => {
    const error = errorOf(() =>
      clusterTiming({ connectionString: postgresUrl, leaseMs: 1_000, renewMs: 600 }),
    );
    expect(isRuntimeError(error, 'invalid_input')).toBe(true);
  });
});

describe('clusterJobSettings', () => {
  it('runs plan steps as jobs, eight at a time per worker, when nothing is given', () => {
    expect(clusterJobSettings({ connectionString: postgresUrl })).toEqual({
      planSteps: 'jobs',
      jobConcurrency: 8,
    });
  });

  it('keeps the values given', () => {
    expect(
      clusterJobSettings({ connectionString: postgresUrl, planSteps: 'inline', jobConcurrency: 256 }),
    ).toEqual({ planSteps: 'inline', jobConcurrency: 256 });
  });

  it.each([
    ['a zero jobConcurrency', { jobConcurrency: 0 }, 'jobConcurrency'],
    ['a jobConcurrency over 256', { jobConcurrency: 257 }, 'jobConcurrency'],
    ['a fractional jobConcurrency', { jobConcurrency: 1.5 }, 'jobConcurrency'],
    ['an unknown planSteps', { planSteps: 'remote' }, 'planSteps'],
  ])('refuses %s with invalid_input naming the field', (_, given, field) => {
    const error = errorOf(() =>
      clusterJobSettings({ connectionString: postgresUrl, ...(given as { jobConcurrency?: number }) }),
    );
    expect(isRuntimeError(error, 'invalid_input')).toBe(true);
    expect(String((error as Error).message)).toContain(field);
  });
});

describe('createRuntime with a cluster option', () => {
  it('refuses a bad cluster timing at construction with invalid_input naming the field', () => {
    const error = errorOf(() =>
      createRuntime({
        ledger: { postgres: { connectionString: postgresUrl, schema: 'never_opened' } },
        cluster: { leaseMs: 10 },
        providers: { scripted: scriptedModel([]) },
        model: { provider: 'scripted', model: 'm' },
      }),
    );
    expect(isRuntimeError(error, 'invalid_input')).toBe(true);
    expect(String((error as Error).message)).toContain('cluster');
  });

  it.each([
    ['planSteps', { planSteps: 'everywhere' }],
    ['jobConcurrency', { jobConcurrency: 0 }],
  ])('refuses a bad %s at construction with invalid_input naming it', (field, given) => {
    const error = errorOf(() =>
      createRuntime({
        ledger: { postgres: { connectionString: postgresUrl, schema: 'never_opened' } },
        cluster: given as { jobConcurrency?: number },
        providers: { scripted: scriptedModel([]) },
        model: { provider: 'scripted', model: 'm' },
      }),
    );
    expect(isRuntimeError(error, 'invalid_input')).toBe(true);
    expect(String((error as Error).message)).toContain(field);
  });
});
