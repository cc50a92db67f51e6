// "Notify this browser" on the account page (src/console/push.ts): registers the console's service
// worker (/console/sw.js), subscribes with the service's VAPID public key (the form's data-push-key)
// and posts the subscription with the page's form, CSRF field included. Loaded by console.js.
const form = document.getElementById('push-subscribe');
const status = document.getElementById('push-status');
const say = (text) => {
  status.textContent = text;
};
const keyBytes = (base64url) => Uint8Array.from(atob(base64url.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));
const sameKey = (buffer, bytes) => Boolean(buffer) && buffer.byteLength === bytes.length && new Uint8Array(buffer).every((byte, i) => byte === bytes[i]);

if (form && 'serviceWorker' in navigator && 'PushManager' in window && 'Notification' in window) {
  const key = keyBytes(form.dataset.pushKey);
  const registered = navigator.serviceWorker.register('/console/sw.js', { scope: '/console/' });
  const button = form.querySelector('button');
  button.hidden = false;
  say(Notification.permission === 'denied' ? 'Notifications are blocked for this site in this browser: allow them in its site settings to be notified here.' : '');
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    button.disabled = true;
    try {
      if ((await Notification.requestPermission()) !== 'granted') {
        say('Notifications were not allowed, so this browser cannot be notified.');
        return;
      }
      const registration = await registered;
      await navigator.serviceWorker.ready;
      let subscription = await registration.pushManager.getSubscription();
      // made with another key (the service's VAPID keys were replaced): subscribe again
      if (subscription && !sameKey(subscription.options.applicationServerKey, key)) {
        await subscription.unsubscribe();
        subscription = null;
      }
      subscription ??= await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key });
      const { endpoint, keys } = subscription.toJSON();
      form.elements.endpoint.value = endpoint;
      form.elements.p256dh.value = keys.p256dh;
      form.elements.auth.value = keys.auth;
      say('Subscribing this browser…');
      form.submit();
    } catch (error) {
      say(`This browser could not be subscribed: ${error.message}`);
    } finally {
      button.disabled = false;
    }
  });
}
