-- The order desk's tables, as test/sdks/agents/prisma/schema.prisma maps them (Prisma's own names:
-- "Customer", "Order" quoted, the enum "OrderStatus"), with two customers and three products.
CREATE SCHEMA shop;
CREATE TYPE shop."OrderStatus" AS ENUM ('PLACED', 'CANCELLED');
CREATE TABLE shop."Customer" (id serial PRIMARY KEY, email text NOT NULL UNIQUE, name text NOT NULL, city text NOT NULL);
CREATE TABLE shop."Product" (sku text PRIMARY KEY, name text NOT NULL, stock integer NOT NULL, price numeric(10,2) NOT NULL);
CREATE TABLE shop."Order" (
  id uuid PRIMARY KEY,
  customer_id integer NOT NULL REFERENCES shop."Customer"(id),
  status shop."OrderStatus" NOT NULL DEFAULT 'PLACED',
  total numeric(10,2) NOT NULL,
  meta jsonb NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now()
);
CREATE TABLE shop.order_lines (
  id serial PRIMARY KEY,
  order_id uuid NOT NULL REFERENCES shop."Order"(id),
  sku text NOT NULL,
  qty integer NOT NULL
);
INSERT INTO shop."Customer" (email, name, city) VALUES ('ada@example.com', 'Ada', 'Paris'), ('bo@example.com', 'Bo', 'Oslo');
INSERT INTO shop."Product" VALUES ('KB-1', 'Keyboard', 5, 49.90), ('MS-2', 'Mouse', 0, 19.50), ('HB-3', 'Hub', 12, 24.00);
