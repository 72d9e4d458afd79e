import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js'
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ToolRunError } from '../pipeline/errors'
import { McpServerConfig } from './config'
import { McpServerState } from './status'

/** The message of any error the SDK or a transport throws. */
export function errorMessage(error: any): string {
  if (error instanceof McpError) return error.message
  const text = error?.message ?? String(error)
  // Node's fetch hides the reason (ECONNREFUSED, ENOTFOUND, …) in `cause`.
  const cause = error?.cause?.code ?? error?.cause?.message
  return cause && !text.includes(cause) ? `${text} (${cause})` : text
}

/**
 * Why connecting failed, in English for logs, `tools.mcp` and the model:
 * the startup timeout, a command that does not exist, or the SDK's message.
 * `tail` is the server's last stderr output, appended when there is one.
 */
export function startErrorText(config: McpServerConfig, error: any, tail?: string) {
  let text: string
  if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
    text = `the MCP server "${config.id}" did not answer within the startup timeout of ${config.startupTimeout} ms`
  } else if (error?.code === 'ENOENT' && config.transport === 'stdio') {
    text = `the command "${config.command}" of MCP server "${config.id}" was not found`
  } else {
    text = `connecting to the MCP server "${config.id}" failed: ${errorMessage(error)}`
  }
  return tail ? `${text} (last output: ${tail})` : text
}

/** Why listing the tools of a connected server failed, in English for logs, `tools.mcp` and `tools.mcp.test`. */
export function listingErrorText(id: string, error: unknown) {
  return `listing the tools of MCP server "${id}" failed: ${errorMessage(error)}`
}

/** Whether a Streamable HTTP request failed with 404: the server no longer knows the session (MCP: start a new one). */
export function isSessionGone(error: unknown) {
  return error instanceof StreamableHTTPError && error.code === 404
}

const reconnectHint = 'The server is reconnected automatically; call the tool again in a moment.'

/** `mcp-unavailable`: a call while the server is not connected, with its state and last error. */
export function unavailableError(id: string, state: McpServerState, lastError?: string) {
  const hint = state === 'disabled' ? 'An administrator has disabled this MCP server.' : reconnectHint
  const reason = state === 'retrying' && lastError ? ` (${lastError})` : ''
  return new ToolRunError('mcp-unavailable', `The MCP server "${id}" is not connected: it is ${state}${reason}.`, { hint })
}

/**
 * The `ToolRunError` for an error of `tools/call`: `mcp-connection-lost`
 * when the connection ended during the call (with `dropReason`), `timeout`
 * for the SDK's own request timeout, `mcp-error` for an error answer (e.g.
 * an unknown tool or invalid parameters) or any other failure.
 */
export function callError(config: McpServerConfig, state: McpServerState, error: any, dropReason?: string) {
  if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed || isSessionGone(error)) {
    const ended = state === 'disabled' || state === 'closed'
    return new ToolRunError('mcp-connection-lost', `The call was cut off: ${dropReason ?? `the connection to MCP server "${config.id}" closed`}.`, {
      hint: ended ? undefined : reconnectHint,
    })
  }
  if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
    return new ToolRunError('timeout', `The MCP server "${config.id}" did not answer within ${config.timeout} ms.`, { status: 'timeout' })
  }
  return new ToolRunError('mcp-error', `The MCP server "${config.id}" answered with an error: ${errorMessage(error)}`)
}
