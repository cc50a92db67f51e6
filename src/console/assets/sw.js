// The console's service worker (served at /console/sw.js, scope /console/; src/console/push.ts):
// shows the notification a push carries (src/push/send.ts `notification`) and, on a click, opens
// the console page it names (the alarm: /console/alarms#alarm-<id>). Nothing is cached.
self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

self.addEventListener('push', (event) => {
  let message = {};
  try {
    message = event.data ? event.data.json() : {};
  } catch {
    message = {};
  }
  const title = typeof message.title === 'string' ? message.title : 'Alarm triggered';
  event.waitUntil(self.registration.showNotification(title, {
    body: typeof message.body === 'string' ? message.body : '',
    tag: typeof message.tag === 'string' ? message.tag : undefined,
    icon: '/console/assets/icon.svg',
    data: { url: typeof message.url === 'string' ? message.url : '/console/alarms' },
  }));
});

/** A console page of this service only: anything else a payload names opens the alarms page. */
function consoleUrl(path) {
  const url = new URL(path, self.location.origin);
  return url.origin === self.location.origin && url.pathname.startsWith('/console/') ? url.href : new URL('/console/alarms', self.location.origin).href;
}

self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  const target = consoleUrl(event.notification.data?.url ?? '/console/alarms');
  event.waitUntil((async () => {
    const windows = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
    const open = windows.find((client) => new URL(client.url).pathname.startsWith('/console/') && 'navigate' in client);
    if (open) return (await open.navigate(target))?.focus();
    return self.clients.openWindow(target);
  })());
});
