/**
 * The only bridge between a sandboxed window and the main process: the five calls of
 * AgentShellApi over IPC, nothing of Electron or Node itself.
 */
import { contextBridge, ipcRenderer } from 'electron';
import { type AgentShellApi, SHELL_API_NAME, SHELL_CHANNELS } from '../shell/api';

const api: AgentShellApi = {
  request: () => ipcRenderer.invoke(SHELL_CHANNELS.request),
  answer: (answer) => ipcRenderer.invoke(SHELL_CHANNELS.answer, answer),
  settings: () => ipcRenderer.invoke(SHELL_CHANNELS.settings),
  changeSettings: (change) => ipcRenderer.invoke(SHELL_CHANNELS.changeSettings, change),
  testModule: (path) => ipcRenderer.invoke(SHELL_CHANNELS.testModule, path),
};

contextBridge.exposeInMainWorld(SHELL_API_NAME, api);
