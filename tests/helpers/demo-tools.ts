import { Context, Schema } from 'koishi'

/**
 * A plugin tool beside the built-in ones (read, write, edit, bash, skill):
 * `get_weather` (read, with an argument schema and a Chinese description),
 * defined by a plugin named `demo-tools`.
 */
export const demoTools = {
  name: 'demo-tools',
  inject: ['tools'],
  apply(ctx: Context) {
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
