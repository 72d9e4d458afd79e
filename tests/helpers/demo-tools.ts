import { Context, Schema } from 'koishi'

/**
 * Stand-ins for the demo's tools, defined by a plugin named `demo-tools`:
 * `bash` (exec), `write_note` (write), `get_weather` (read, with an
 * argument schema). The console tests look at them in a real app.
 */
export const demoTools = {
  name: 'demo-tools',
  inject: ['tools'],
  apply(ctx: Context) {
    ctx.tools.define({
      name: 'bash',
      description: 'Run a shell command in the workspace.',
      args: Schema.object({ command: Schema.string().required().description('The command line') }),
      traits: { effect: 'exec', risk: 'dangerous' },
      run: ({ command }) => `ran ${command}`,
    })
    ctx.tools.define({
      name: 'write_note',
      description: 'Save a note for later.',
      args: Schema.object({ text: Schema.string().required() }),
      traits: { effect: 'write' },
      run: ({ text }) => `saved ${text.length} characters`,
    })
    ctx.tools.define({
      name: 'get_weather',
      description: 'Current weather for a city. 查询城市天气。',
      args: Schema.object({
        city: Schema.string().required().description('City name, e.g. Paris'),
        unit: Schema.union(['celsius', 'fahrenheit']).default('celsius').description('Temperature unit'),
      }),
      traits: { effect: 'read' },
      run: ({ city, unit }) => `${city}: 21 ${unit === 'celsius' ? '°C' : '°F'}`,
    })
  },
}

/** A scene rule that hides `bash` in group chats. */
export const noBashInGroups = { name: 'no-bash-in-groups', kind: 'group', deny: ['bash'] }
