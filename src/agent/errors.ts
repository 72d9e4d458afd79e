/**
 * Why a model request failed. `code` picks the chat text
 * `chatluna-tools.agent.errors.<code>`:
 *
 * - `http`: the endpoint answered with an error status (`status`, and the
 *   endpoint's own `message` when its body had one);
 * - `rate-limit`: HTTP 429 (`retryAfter` in seconds when the endpoint said);
 * - `auth`: HTTP 401 or 403 (a wrong or missing API key);
 * - `timeout`: no response, or no stream data, within the configured time;
 * - `network`: the endpoint could not be reached;
 * - `bad-response`: the body was not a chat completion (bad JSON, no message,
 *   a broken stream);
 * - `model-error`: the endpoint sent an `{ error }` object with status 200
 *   (some servers do, also in the middle of a stream);
 * - `aborted`: the request was cancelled (the plugin stopped).
 */
export class ProviderError extends Error {
  constructor(
    public code: 'http' | 'rate-limit' | 'auth' | 'timeout' | 'network' | 'bad-response' | 'model-error' | 'aborted',
    message: string,
    public options: { status?: number; retryAfter?: number; detail?: string } = {},
  ) {
    super(message)
    this.name = 'ProviderError'
  }

  /** Parameters of the chat text: `status`, `message` (one line, at most 300 characters), `retryAfter`. */
  get params() {
    const line = (this.options.detail ?? this.message).replace(/\s+/g, ' ').trim()
    return {
      status: this.options.status ?? '',
      message: line.length > 300 ? line.slice(0, 299) + '…' : line,
      retryAfter: this.options.retryAfter ?? '',
    }
  }
}
