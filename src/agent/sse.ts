import { createParser, EventSourceMessage } from 'eventsource-parser'

/** Most characters one server-sent event may hold before the stream is refused (8 MiB of text). */
export const maxEventLength = 8 * 1024 * 1024

/** Why reading a stream of server-sent events stopped early. */
export class StreamReadError extends Error {
  constructor(public code: 'idle-timeout' | 'too-large' | 'read-error', message: string) {
    super(message)
  }
}

/**
 * Reads a byte stream of server-sent events (the WHATWG "text/event-stream"
 * format: `event:` / `data:` / `id:` fields, comments, LF, CR or CRLF line
 * ends; parsed by eventsource-parser) and calls `onEvent` for each event in
 * order. `onEvent` returns `true` to stop reading (e.g. at `data: [DONE]`);
 * the rest of the body is then cancelled.
 *
 * `idleTimeout` (ms, 0 = none) limits the wait for the next chunk; it ends
 * the read with a `StreamReadError('idle-timeout')`. An event larger than
 * {@link maxEventLength} ends it with `'too-large'`, a broken connection
 * with `'read-error'`. Aborting `signal` rejects with the signal's reason.
 */
export async function readServerSentEvents(
  stream: AsyncIterable<Uint8Array> & { cancel?(reason?: unknown): Promise<void> },
  onEvent: (event: EventSourceMessage) => boolean | void,
  options: { idleTimeout?: number; signal?: AbortSignal } = {},
): Promise<void> {
  let stopped = false
  let failure: Error | undefined
  const parser = createParser({
    maxBufferSize: maxEventLength,
    onEvent(event) {
      if (stopped) return
      if (onEvent(event) === true) stopped = true
    },
    onError(error) {
      if (error.type === 'max-buffer-size-exceeded') {
        failure = new StreamReadError('too-large', `an event is larger than ${maxEventLength} characters`)
      }
    },
  })
  const decoder = new TextDecoder()
  const iterator = stream[Symbol.asyncIterator]()
  const { idleTimeout = 0, signal } = options
  try {
    while (!stopped && !failure) {
      const next = await withTimeout(iterator.next(), idleTimeout, signal)
      if (next.done) break
      parser.feed(decoder.decode(next.value, { stream: true }))
    }
    if (!stopped && !failure) {
      // A last event without its blank line still counts (some servers end the body right after it);
      // extra blank lines dispatch nothing.
      parser.feed(decoder.decode() + '\n\n')
    }
  } catch (error) {
    if (signal?.aborted) throw signal.reason
    if (error instanceof StreamReadError) throw error
    throw new StreamReadError('read-error', `the stream broke off: ${error?.cause?.message ?? error?.message ?? error}`)
  } finally {
    if (stopped || failure) await iterator.return?.().catch(() => {})
  }
  if (failure) throw failure
}

function withTimeout<T>(promise: Promise<T>, timeout: number, signal?: AbortSignal): Promise<T> {
  if (!(timeout > 0) && !signal) return promise
  return new Promise<T>((resolve, reject) => {
    const timer = timeout > 0 && setTimeout(() => {
      reject(new StreamReadError('idle-timeout', `no data for ${timeout} ms`))
    }, timeout)
    const onAbort = () => reject(signal.reason)
    signal?.addEventListener('abort', onAbort, { once: true })
    promise.then(resolve, reject).finally(() => {
      if (timer) clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
    })
  })
}
