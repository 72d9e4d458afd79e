// eslint-disable-next-line @typescript-eslint/no-require-imports
const { version } = require('../../package.json') as { version: string }

/**
 * How this plugin introduces itself in MCP `initialize`, as a client of
 * the configured servers and as the server "self": the package name and
 * version (MCP `Implementation`).
 */
export const implementation = { name: 'koishi-plugin-chatluna-tools', version }
