declare module '*.vue' {
  import { DefineComponent } from 'vue'
  const component: DefineComponent
  export default component
}

declare module '*.yml' {
  const value: any
  export default value
}

declare module 'virtual:uno.css'
