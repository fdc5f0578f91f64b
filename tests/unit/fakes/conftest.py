from fakes.fixtures import fake

__all__ = ["fake"]
