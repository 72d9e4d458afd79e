/**
 * A first-in first-out lock: tools whose `traits.parallel` is false take it,
 * so they never overlap each other (DESIGN.md pipeline step 7).
 */
export class SerialLock {
  private tail: Promise<void> = Promise.resolve()

  /**
   * Waits for every earlier holder, then returns a release function. When
   * `signal` aborts while waiting, rejects with the signal's reason and
   * gives up its place without blocking later holders.
   */
  acquire(signal?: AbortSignal): Promise<() => void> {
    let release: () => void
    const turn = new Promise<void>((resolve) => release = resolve)
    const previous = this.tail
    this.tail = previous.then(() => turn)
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        // Our place in the queue still passes the lock on when our turn comes.
        previous.then(release)
        reject(signal.reason)
      }
      if (signal?.aborted) return onAbort()
      signal?.addEventListener('abort', onAbort, { once: true })
      previous.then(() => {
        if (signal?.aborted) return
        signal?.removeEventListener('abort', onAbort)
        resolve(release)
      })
    })
  }
}
