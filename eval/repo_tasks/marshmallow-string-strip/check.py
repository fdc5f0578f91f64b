"""fields.String(strip=True) strips on load; plain String fields do not."""

from marshmallow import Schema, fields


class Person(Schema):
    name = fields.String(strip=True)
    note = fields.String()


loaded = Person().load({"name": "  Ada ", "note": "  as is "})
assert loaded == {"name": "Ada", "note": "  as is "}, loaded
assert fields.String(strip=True).deserialize("\tx \n") == "x"
assert fields.String().deserialize(" y ") == " y "
assert fields.Email(strip=True).deserialize(" a@b.io ") == "a@b.io"
