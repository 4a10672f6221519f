/**
 * The messages of the ingest benchmark: a captured API call as a client posts it to
 * `POST /buckets/<key>/messages`, request and response with headers and JSON bodies, about 1 KB
 * each as JSON. Used for the POSTed batches and for filling a bucket.
 */

const SKUS = ['SKU-1042', 'SKU-2210', 'SKU-3117', 'SKU-4090', 'SKU-5561'];

/** Message `n` of a series; `timestamp` (Unix seconds) is the time of its request. */
export function benchMessage(n: number, timestamp: number) {
  const customer = 100_000 + (n % 90_000);
  const order = `ord_${(n * 2_654_435_761) % 4_294_967_296}`;
  const items = [0, 1, 2].map((i) => ({
    sku: SKUS[(n + i) % SKUS.length],
    quantity: 1 + ((n + i) % 3),
    unit_price: 1999 + 500 * i,
  }));
  return {
    request: {
      method: 'POST',
      url: `https://api.shop.example.com/v2/orders?customer=${customer}&channel=web&n=${n}`,
      headers: {
        accept: 'application/json',
        'content-type': 'application/json',
        'user-agent': 'checkout-service/4.2.1 (+https://shop.example.com)',
        'x-request-id': `req-${n.toString(16).padStart(12, '0')}`,
        'accept-encoding': 'gzip, br',
      },
      body: JSON.stringify({
        customer_id: customer,
        items,
        shipping: { name: 'Ada Lovelace', city: 'London', postcode: 'NW1 6XE', country: 'GB' },
        coupon: n % 7 === 0 ? 'WELCOME10' : null,
      }),
      timestamp,
    },
    response: {
      status: n % 50 === 0 ? 422 : 201,
      headers: {
        'content-type': 'application/json; charset=utf-8',
        'cache-control': 'no-store',
        'x-request-id': `req-${n.toString(16).padStart(12, '0')}`,
      },
      body: JSON.stringify({
        id: order,
        status: 'created',
        total: items.reduce((sum, item) => sum + item.quantity * item.unit_price, 0),
        currency: 'EUR',
      }),
      response_time: 0.018 + (n % 40) / 1000,
      timestamp: timestamp + 0.02,
    },
  };
}

/** A batch of `size` messages starting at message `first`, a millisecond apart. */
export function benchBatch(first: number, size: number, timestamp: number) {
  return Array.from({ length: size }, (_, i) => benchMessage(first + i, timestamp + i / 1000));
}
