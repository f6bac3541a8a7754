/**
 * Stops this process when the one that started it is gone. A launcher that runs svc through a
 * shell (an npm script without `exec`, `npx`) forwards SIGTERM to that shell, which dies without
 * passing it on: svc would be left running, re-parented to PID 1. Seeing its parent change, svc
 * sends itself SIGTERM, so that it stops as the launcher was asked to. Started by PID 1 itself
 * (a container, systemd), the parent never changes and this never fires.
 */
export function stopWithParent(): void {
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    process.kill(process.pid, 'SIGTERM');
  }, 500);
  timer.unref();
}
