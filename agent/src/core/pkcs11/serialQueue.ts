/**
 * Runs jobs one after the other. Each PKCS#11 module gets one: graphene calls are synchronous,
 * but our operations span awaits (the user typing a PIN between C_OpenSession and C_Login), and
 * much vendor middleware is not safe for interleaved sessions.
 */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();
  private running = 0;

  run<T>(job: () => Promise<T> | T): Promise<T> {
    this.running++;
    const result = this.tail.then(job).finally(() => {
      this.running--;
    });
    // The next job waits for this one, whether it failed or not.
    this.tail = result.catch(() => undefined);
    return result;
  }

  get idle(): boolean {
    return this.running === 0;
  }
}
