-- Two rules of account tokens were kept only by the code that issues them (`tokens issue` locks the customer
-- first): one active token per customer, and a token's account is its customer's account, which linking trusts
-- when it matches a purchase's token within the purchase's account. The database now keeps both.
DROP INDEX account_tokens_customer_idx;
CREATE UNIQUE INDEX account_tokens_one_active_idx ON account_tokens (customer_id) WHERE status = 'active';

ALTER TABLE customers ADD CONSTRAINT customers_id_account_key UNIQUE (id, account_id);
ALTER TABLE account_tokens ADD CONSTRAINT account_tokens_customer_account_fkey
    FOREIGN KEY (customer_id, account_id) REFERENCES customers (id, account_id);
