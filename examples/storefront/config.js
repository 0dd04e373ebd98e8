// The API origins this page may talk to, the first by default. A static
// server serves this file as it is; `serve.py --api URL` writes it from
// its options. `?api=` may pick one of these, never another host.
window.STOREFRONT_APIS = ["http://127.0.0.1:8080", "http://localhost:8080"];
