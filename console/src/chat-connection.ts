/**
 * The connection indicator (`#conn`) and, while no session opens, the diagnosis in words:
 * the server asked why (adapter.ts `diagnose`), a banner saying "server down" or "database
 * down", and a refused token handed back to the host page (sign out).
 */
import { diagnose } from './adapter.js';
import type { ChatState } from './chat-state.js';
import { banner, byId } from './dom.js';
import { tokenWords } from './words.js';

/** What the indicator shows, as its `data-state`. */
type ConnShown = 'connected' | 'reconnecting' | 'offline' | 'idle';

/** What the indicator needs from the view. */
export interface ConnectionHooks {
  /** The token was refused for good: sign out with this text. */
  signedOut(reason: string): void;
  /** The session opened: redraw the notice (the unsupported features may have changed). */
  opened(): void;
}

/** The connection indicator and the diagnosis of a session that does not open. */
export class ConnectionIndicator {
  private readonly state: ChatState;
  private readonly token: string;
  private readonly hooks: ConnectionHooks;
  private diagnoseTimer: ReturnType<typeof setTimeout> | undefined;
  /** True while the banner shows a diagnosis (cleared when the session opens). */
  private connBanner = false;

  constructor(state: ChatState, token: string, hooks: ConnectionHooks) {
    this.state = state;
    this.token = token;
    this.hooks = hooks;
  }

  /** The connection changed: show its state, and diagnose after a while when it does not open. */
  update(): void {
    if (this.state.closed) return;
    const s = this.state.client.connection.getSnapshot();
    document.body.dataset.unsupported = this.state.unsupported().join(' ');
    if (s.state === 'open') {
      clearTimeout(this.diagnoseTimer);
      this.diagnoseTimer = undefined;
      this.show('connected', 'Connected');
      if (this.connBanner) {
        banner('');
        this.connBanner = false;
      }
      this.hooks.opened();
      return;
    }
    if (s.state === 'closed') return;
    if (!navigator.onLine) this.show('offline', 'Offline (no network)');
    else if (s.state === 'connecting') this.show('reconnecting', 'Connecting…');
    else if (byId('conn').dataset.state !== 'offline') this.show('reconnecting', 'Reconnecting…');
    this.diagnoseTimer ??= setTimeout(() => void this.runDiagnosis(), 1200);
  }

  /** The browser says it has no network. */
  offline(): void {
    this.show('offline', 'Offline (no network)');
  }

  /** Stops diagnosing (the view is closing). */
  stop(): void {
    clearTimeout(this.diagnoseTimer);
  }

  /** Shows that no one is signed in. */
  idle(): void {
    this.show('idle', 'Not signed in');
  }

  /** Asks the server why no session opens, says it in words, and asks again while it lasts. */
  private async runDiagnosis(): Promise<void> {
    const d = await diagnose(this.token);
    this.diagnoseTimer = undefined;
    if (this.state.closed || this.state.client.connection.getSnapshot().state === 'open') return;
    switch (d.kind) {
      case 'server_down':
        this.show('offline', 'Offline: server unreachable');
        banner(
          'The chat server cannot be reached (it may be down or restarting). Messages you send now are kept in this browser and go out, once each, when it is back.',
          'info',
        );
        this.connBanner = true;
        break;
      case 'database_down':
        this.show('reconnecting', 'Reconnecting…');
        banner('The chat server is up but cannot reach its database; retrying. Your unsent messages are kept.', 'info');
        this.connBanner = true;
        break;
      case 'token':
        this.hooks.signedOut(tokenWords(d.message));
        return;
      case 'unknown':
        this.show('reconnecting', 'Reconnecting…');
        break;
    }
    this.diagnoseTimer = setTimeout(() => void this.runDiagnosis(), 2500);
  }

  private show(state: ConnShown, text: string): void {
    const el = byId('conn');
    el.dataset.state = state;
    el.textContent = text;
  }
}
