-- wrk script: POST /auth/login as the seeded demo customer.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["X-Api-Version"] = "v1.0"
wrk.body = '{"emailAddress":"ava@example.com","password":"storefront-demo-1","gRecaptchaResponse":"bench"}'
