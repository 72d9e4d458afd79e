/**
 * Waits for `promise` at most `ms` ms, or until `signal` aborts: resolves
 * `'done'` when it settles in time, `'timeout'` or `'aborted'` otherwise
 * (the promise itself keeps running); rejects as `promise` does. For work
 * the bot cannot cancel, such as a chat platform that never confirms a
 * message.
 */
export function settleWithin(promise: Promise<unknown>, ms: number, signal?: AbortSignal): Promise<'done' | 'timeout' | 'aborted'> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => finish('timeout'), ms)
    const onAbort = () => finish('aborted')
    signal?.addEventListener('abort', onAbort, { once: true })
    function finish(outcome: 'done' | 'timeout' | 'aborted', error?: unknown) {
      clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
      if (error) reject(error)
      else resolve(outcome)
    }
    promise.then(() => finish('done'), (error) => finish('done', error ?? new Error('rejected without a reason')))
  })
}
